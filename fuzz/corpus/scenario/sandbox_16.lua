while true do end
return scenario { name = 'ok', provider = { chat{} } }
