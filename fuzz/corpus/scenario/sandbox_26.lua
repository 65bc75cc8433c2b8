local s = string.rep('a', 100000)
local i = s:find('.-.-b')
return scenario { name = 'ok', provider = { chat{} } }
