-- string.rep builds 1 MB per call, uncharged: the instruction budget lets
-- this load run for many minutes (fusebox check still busy after 60 s).
local n = 0
for i = 1, 1e9 do n = n + #string.rep('x', 1000000) end
return scenario { name = 'rep', provider = { chat{} } }
