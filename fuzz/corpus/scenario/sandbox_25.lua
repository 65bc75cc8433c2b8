return scenario {
  name = 'escape at decide time',
  provider = function(req)
    string.find(string.rep('a', 2000), string.rep('a-', 6) .. 'b')
    return chat { content = 'x' }
  end,
}
