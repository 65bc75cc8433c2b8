return scenario {
  name = 'escape at decide time',
  provider = function(req)
    for i = 1, 1e6 do string.gsub(string.rep('a', 5000), '(a*)b', '') end
    return chat { content = 'x' }
  end,
}
