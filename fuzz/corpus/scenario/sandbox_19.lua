return scenario {
  name = 'escape at decide time',
  provider = function(req)
    for i = 1, 1e9 do pcall(error) end
    return chat { content = 'x' }
  end,
}
