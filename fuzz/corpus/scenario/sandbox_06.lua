loadfile('/etc/passwd')
return scenario { name = 'ok', provider = { chat{} } }
