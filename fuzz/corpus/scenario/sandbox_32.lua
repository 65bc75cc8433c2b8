local s = 'x'
while true do s = s .. s end
return scenario { name = 'ok', provider = { chat{} } }
