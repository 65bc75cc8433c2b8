return scenario {
  name = 'escape at decide time',
  provider = function(req)
    local f = assert(load('\27LuaT', 'x', 'b'))
    return chat { content = 'x' }
  end,
}
