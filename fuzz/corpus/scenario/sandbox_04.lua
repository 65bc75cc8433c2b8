require('os')
return scenario { name = 'ok', provider = { chat{} } }
