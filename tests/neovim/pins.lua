-- Pins and proposals as a user drives them: a proposal already waiting when Neovim starts is
-- asked about with the three choices (vim.ui.select) and answered "Pin"; one an agent makes
-- while Neovim runs (another process, as `rutter mcp` does) is asked about too, dismissed,
-- then answered from :RutterProposals with "Custom reply…" and "Pin my reply"; :RutterPins
-- lists the run's pins, `a` adds one and `d` removes one.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local TARGET = "services/api/internal/parser/input.go"
local RUN = assert(vim.env.RUTTER_NVIM_RUN)

local selects, inputs = {}, {}
local select_answers = { "Pin", false, "Custom reply…", "Pin my reply", "Remove pin" }
local input_answers = { "Use spaces.", "Answer in English." }

vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    titles[#titles + 1] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  selects[#selects + 1] = { prompt = opts.prompt, items = titles }
  local answer = table.remove(select_answers, 1)
  vim.schedule(function()
    for index, title in ipairs(titles) do
      if title == answer then
        return on_choice(items[index], index)
      end
    end
    on_choice(nil, nil)
  end)
end

vim.ui.input = function(opts, on_confirm)
  inputs[#inputs + 1] = { prompt = opts.prompt, default = opts.default }
  local answer = table.remove(input_answers, 1)
  vim.schedule(function()
    on_confirm(answer)
  end)
end

local answered = 0
api.nvim_create_autocmd("User", {
  pattern = "RutterProposalAnswered",
  callback = function()
    answered = answered + 1
  end,
})
local updates = 0
api.nvim_create_autocmd("User", {
  pattern = "RutterPinsUpdated",
  callback = function()
    updates = updates + 1
  end,
})

local PROPOSE = [[
import sys
from rutter_core.app.facade import Rutter
from rutter_core.app.pins import ProposePinParams
from rutter_core.store import open_store
with open_store(sys.argv[1]) as store:
    print(Rutter(store).pins.propose(ProposePinParams(run_id=sys.argv[2], text=sys.argv[3]), actor="mcp").proposal_id)
]]

H.run(function(R)
  require("rutter").setup({})
  local buf = H.edit(TARGET)
  H.attached(buf)

  -- The proposal waiting at start: asked about once, answered "Pin".
  H.wait("the prompt about the waiting proposal", function()
    return #selects >= 1
  end)
  H.wait("the answer", function()
    return answered >= 1
  end)
  R.first_prompt = selects[1]

  -- An agent proposes while Neovim runs: asked about too; dismissed, nothing is answered.
  local db = vim.fs.joinpath(vim.env.RUTTER_HOME, "rutter.db")
  R.second = vim.trim(vim.fn.system({ vim.env.RUTTER_NVIM_PYTHON, "-c", PROPOSE, "sqlite:///" .. db, RUN, "Prefer tabs." }))
  H.wait("the prompt about the new proposal", function()
    return #selects >= 2
  end)
  R.second_prompt = selects[2]

  -- :RutterProposals lists it; <CR> answers with a custom reply, pinned.
  local before = updates
  vim.cmd("RutterProposals")
  H.wait("the proposals float", function()
    return updates > before
  end)
  R.proposals = require("rutter.pins").float().lines
  api.nvim_win_set_cursor(0, { 2, 0 })
  H.press("<CR>")
  H.wait("the custom answer", function()
    return answered >= 2
  end)
  H.wait("the emptied float", function()
    local f = require("rutter.pins").float()
    return f and f.lines[1] == "No pin proposal waits for an answer."
  end)
  require("rutter.pins").close()

  -- :RutterPins RUN: both pins; `a` adds one, `d` on the first removes it.
  before = updates
  vim.cmd("RutterPins " .. RUN)
  H.wait("the pins float", function()
    return updates > before
  end)
  R.pins = require("rutter.pins").float().lines
  before = updates
  H.press("a")
  H.wait("the pins after adding", function()
    local f = require("rutter.pins").float()
    return updates > before and f and H.contains(f.lines, "Answer in English.")
  end)
  R.added = require("rutter.pins").float().lines
  api.nvim_win_set_cursor(0, { 2, 0 })
  before = updates
  H.press("d")
  H.wait("the pins after removing", function()
    local f = require("rutter.pins").float()
    return updates > before and f and not H.contains(f.lines, "Keep the public API stable.")
  end)
  R.removed = require("rutter.pins").float().lines
  R.selects = selects
  R.inputs = inputs
end)
