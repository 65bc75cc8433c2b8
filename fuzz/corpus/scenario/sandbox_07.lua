return scenario {
  name = 'escape at decide time',
  provider = function(req)
    load(string.dump(function() end))
    return chat { content = 'x' }
  end,
}
