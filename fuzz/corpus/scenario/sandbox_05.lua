return scenario {
  name = 'escape at decide time',
  provider = function(req)
    dofile('/etc/passwd')
    return chat { content = 'x' }
  end,
}
