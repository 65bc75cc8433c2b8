return scenario {
  name = 'escape at decide time',
  provider = function(req)
    package.loadlib('x', 'y')
    return chat { content = 'x' }
  end,
}
