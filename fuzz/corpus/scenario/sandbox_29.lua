return scenario {
  name = 'escape at decide time',
  provider = function(req)
    for i = 1, 1e7 do ('x'):rep(1000):find('y', 1, true) end
    return chat { content = 'x' }
  end,
}
