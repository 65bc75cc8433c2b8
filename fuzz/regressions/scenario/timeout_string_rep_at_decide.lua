-- string.rep builds 1 MB per call, uncharged: the instruction budget lets
-- this provider run for many minutes while it holds the scenario's lock.
return scenario {
  name = "rep",
  provider = function(req)
    local n = 0
    for i = 1, 1e9 do n = n + #string.rep("x", 1000000) end
    return chat {}
  end,
}
