local ok = pcall(function()
 local x <close> = setmetatable({}, { __close = function() while true do end end })
 error('first') end)
return scenario { name = 'ok', provider = { chat{} } }
