debug.getregistry()
return scenario { name = 'ok', provider = { chat{} } }
