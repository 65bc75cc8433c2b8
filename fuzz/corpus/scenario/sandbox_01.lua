return scenario {
  name = 'escape at decide time',
  provider = function(req)
    
    os.exit(1)
    return chat { content = 'x' }
  end,
}
