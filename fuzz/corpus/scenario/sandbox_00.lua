os.execute('touch /tmp/fusebox_pwned')
return scenario { name = 'ok', provider = { chat{} } }
