local function f() while true do end end
while true do xpcall(f, function() while true do end end) end
return scenario { name = 'ok', provider = { chat{} } }
