coroutine.wrap(function() end)
return scenario { name = 'ok', provider = { chat{} } }
