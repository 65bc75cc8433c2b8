local s = string.rep('(', 3000)
for i = 1, 1e6 do s:match('%b()') end
return scenario { name = 'ok', provider = { chat{} } }
