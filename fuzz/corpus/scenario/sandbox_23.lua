return scenario {
  name = 'escape at decide time',
  provider = function(req)
    do local x <close> = setmetatable({}, { __close = function()
     while true do end end }) end
    return chat { content = 'x' }
  end,
}
