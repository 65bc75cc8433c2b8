return scenario {
  name = 'escape at decide time',
  provider = function(req)
    print('hi')
    return chat { content = 'x' }
  end,
}
