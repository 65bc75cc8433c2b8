return scenario {
  name = 'escape at decide time',
  provider = function(req)
    local i = 0
    repeat
     i = i + 1
    until false
    return chat { content = 'x' }
  end,
}
