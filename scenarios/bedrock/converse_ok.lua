-- scenarios/bedrock/converse_ok.lua
return scenario {
  name = "Bedrock Converse answers at once",
  doc  = [[POST /model/{modelId}/converse answers the first call with
           output.message (one text block, stopReason end_turn), or
           /converse-stream with the binary event stream ending in
           messageStop and metadata. A Bedrock client gets "hello from
           bedrock".]],
  tags = { "bedrock", "baseline" },

  provider = {
    chat { content = "hello from bedrock" },
  },

  client = { dialect = "bedrock" },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 1,
    outcome = "ok",
  },
}
