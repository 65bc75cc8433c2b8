-- scenarios/incidents/overnight_proofreading.lua
--
-- Chapters are the calls (prompts "Question N"); the chapter whose prompt
-- holds a 3 is the one full of scans. Every other chapter is refused with 529,
-- then 429, then answered on its third attempt.

local function prompt_of(req)
  local text = {}
  for _, m in ipairs((req.body and req.body.messages) or {}) do
    if type(m.content) == "string" then
      text[#text + 1] = m.content
    elseif type(m.content) == "table" then
      for _, block in ipairs(m.content) do
        if type(block) == "table" and type(block.text) == "string" then
          text[#text + 1] = block.text
        end
      end
    end
  end
  return table.concat(text, " ")
end

return scenario {
  name = "Incident: the overnight proofreading pipeline",
  doc  = [[A publisher's night job proofreads manuscripts chapter by chapter.
           At 2 am the API starts alternating 529 overloaded and 429 rate limit
           answers; the job's retry loop treated every failure alike and
           retried at a fixed 1 s, forever, adding load to an overloaded
           service. One chapter full of high-resolution scans was over the size
           limit (413) on every attempt, yet sat in the retry queue blocking
           the chapters behind it. In the morning the job was rerun from
           scratch and chapters already saved were saved twice (that half is
           played by effects/commit_then_drop_*.lua). A good client retries 529
           and 429 with growing, jittered backoff in one layer only, and sends
           the 413 chapter to quarantine after one attempt so the queue moves
           on.]],
  tags = { "incident", "anthropic", "transient", "permanent", "backoff", "layers" },

  provider = function(req)
    if prompt_of(req):find("3", 1, true) then
      return fail { status = 413, type = "request_too_large",
                    message = "Request exceeds the maximum allowed number of bytes." }
    end
    if req.attempt == 1 then
      return fail { status = 529, type = "overloaded_error", message = "Overloaded" }
    elseif req.attempt == 2 then
      return fail { status = 429, type = "rate_limit_error",
                    message = "Number of request tokens has exceeded your per-minute rate limit." }
    end
    return chat { content = "Chapter proofread: 12 suggestions." }
  end,

  client = { dialect = "anthropic", requests = 6, concurrency = 1, layers = 3,
             deadline = 10, attempts = 3,
             backoff = { base = 2, cap = 8, jitter = 0.1 } },

  expect = {
    point = { "no_retry_after", "max_requests" },
    attempts = { min = 1, max = 3 },
    max_requests = 16,
    no_retry_after = { 413 },
    backoff = { growth = true },
    outcome = { "ok", "degraded", "error" },
    within_deadline = true,
  },
}
