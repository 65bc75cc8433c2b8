return scenario {
  name = 'escape at decide time',
  provider = function(req)
    local s = string.rep('x', 1 << 28)
    return chat { content = 'x' }
  end,
}
