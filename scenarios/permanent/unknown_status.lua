-- scenarios/permanent/unknown_status.lua
return scenario {
  name = "An unrecognised error fails closed",
  doc  = [[The provider answers with a status no table knows what to do with
           (451, with an error code nobody documented). Retrying the unknown is
           a gamble with the user's time and money: a good client fails closed,
           making one attempt and keeping the request id for the bug report,
           instead of retrying "just in case".]],
  tags = { "permanent", "unknown" },

  provider = {
    fail { status = 451, code = "unavailable_for_legal_reasons",
           message = "This content is not available in your region." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 451 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
