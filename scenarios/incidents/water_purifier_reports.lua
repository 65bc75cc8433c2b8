-- scenarios/incidents/water_purifier_reports.lua
--
-- Time runs at 1:10 of the story: the gateway's 60 s is 6 s here. The gateway
-- is played by the provider: a non-streaming request is cut after 6 s (the
-- connection closes in the middle of the body), while the report it asked for
-- is still generated and billed in full. A streaming request passes.

local REPORT = string.rep("Water quality history: hardness, TDS, filter wear. ", 40)

return scenario {
  name = "Incident: the water-purifier reports cut at 60 s",
  doc  = [[A water-purifier rental company generates a water-quality report for
           each customer before a technician's visit. The reports grew; a long
           one takes 70-90 s, but the company's API gateway cuts non-streaming
           requests at 60 s. The model kept generating and billing after the
           cut, and the gateway, the app's wrapper and the SDK each retried,
           while technicians pressed "retry" too: spend rose 40 % above the
           reports actually delivered. A good client retries in one layer only
           (at most one retry for such a costly call), keeps a deadline, and
           answers with a degraded message ("the report will be ready
           tonight") instead of paying for the same report again and again.
           The real fix is to stream the report with an idle timeout.]],
  tags = { "incident", "cost", "gateway", "timeout", "layers" },

  provider = function(req)
    if req.stream then
      return stream { content = REPORT, interval = 0.01 }
    end
    return delay { 6, truncate { chat { content = REPORT, usage = { input = 3000, output = 6000 } },
                                 at = 200, mode = "early-close" } }
  end,

  client = { layers = 3, deadline = 15, attempts = 2, attempt_timeout = 10, max_tokens = 8000,
             degraded = "The report is not ready; it will be generated tonight." },

  expect = {
    point = { "cost", "max_requests" },
    max_requests = 2,
    cost = { max_billed = 18000 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
