-- scenarios/cohere/chat_ok.lua
return scenario {
  name = "Cohere answers at once",
  doc  = [[POST /v2/chat answers the first call: a message with one text
           block (finish_reason COMPLETE), or the typed event stream ending
           in message-end. A Cohere client gets "hello from cohere".]],
  tags = { "cohere", "baseline" },

  provider = {
    chat { content = "hello from cohere" },
  },

  client = { dialect = "cohere" },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 1,
    outcome = "ok",
  },
}
