return scenario {
  name = 'escape at decide time',
  provider = function(req)
    io.open('/etc/passwd')
    return chat { content = 'x' }
  end,
}
