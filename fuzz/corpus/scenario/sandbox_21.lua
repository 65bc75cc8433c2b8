return scenario {
  name = 'escape at decide time',
  provider = function(req)
    local ok = pcall(function() while true do end end)
    error('after')
    return chat { content = 'x' }
  end,
}
