return scenario {
  name = 'escape at decide time',
  provider = function(req)
    local f, e = load('x = ', '=chunk')
    assert(f, e)
    return chat { content = 'x' }
  end,
}
