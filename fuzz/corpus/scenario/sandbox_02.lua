os.getenv('HOME')
return scenario { name = 'ok', provider = { chat{} } }
