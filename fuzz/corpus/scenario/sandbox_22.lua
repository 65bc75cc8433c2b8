string.gsub(string.rep('a', 100), '.', function() while true do end end)
return scenario { name = 'ok', provider = { chat{} } }
