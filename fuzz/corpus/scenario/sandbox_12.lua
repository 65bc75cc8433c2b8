local f = assert(load('\27LuaT'))
return scenario { name = 'ok', provider = { chat{} } }
