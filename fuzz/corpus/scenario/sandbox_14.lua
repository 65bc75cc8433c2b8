load('os.execute(1)')()
return scenario { name = 'ok', provider = { chat{} } }
