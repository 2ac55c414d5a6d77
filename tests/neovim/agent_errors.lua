-- An agent's view failing closed (GEMINI.md is not UTF-8; no other agent reads it): the float
-- as Gemini CLI shows the typed error, and :RutterAgents shows it in Gemini's column while the
-- other agents' columns still show their views.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local updated = 0
api.nvim_create_autocmd("User", {
  pattern = "RutterAgentsUpdated",
  callback = function()
    updated = updated + 1
  end,
})

H.run(function(R)
  require("rutter").setup({})
  local main = H.edit("svc/main.go")
  H.attached(main)
  local f = H.float_after("RutterAgent gemini", "the float as Gemini CLI", function(float)
    return float.agent == "gemini" and type(float.result) == "table" and float.result.error ~= nil
  end)
  R.float = { lines = f.lines, title = f.title, result = f.result }
  vim.cmd("close")
  vim.cmd("RutterAgents")
  H.wait("the agents side by side", function()
    return updated > 0
  end)
  R.columns = require("rutter.agents").state()
end)
