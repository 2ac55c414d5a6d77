-- A run created from the CLI before Neovim started: drift on disk shows as a diagnostic on
-- the open AGENTS.md, :RutterRuns marks the run stale, and the code action reviews and
-- confirms the refresh (vim.ui.select answered as a user would).
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)

local AGENTS = "services/api/internal/parser/AGENTS.md"
local TARGET = "services/api/internal/parser/input.go"

local function drift(buf)
  return vim.tbl_filter(function(d)
    return d.code == "instructions_drift"
  end, H.diagnostics(buf))
end

H.run(function(R)
  require("rutter").setup({})
  local target = H.edit(TARGET)
  H.attached(target)
  local agents = H.edit(AGENTS)
  H.attached(agents)

  -- Before any change: the run is up to date, nothing drifts. The float stays open.
  local changed_events = 0
  vim.api.nvim_create_autocmd("User", {
    pattern = "RutterRunsChanged",
    callback = function()
      changed_events = changed_events + 1
    end,
  })
  vim.cmd("RutterRuns")
  H.wait("the runs float", function()
    local f = require("rutter.runs").float()
    return f and f.result
  end)
  R.before = require("rutter.runs").float().lines
  R.drift_before = drift(agents)

  -- An agent (or git) rewrites the file behind Neovim's back.
  local original = table.concat(vim.api.nvim_buf_get_lines(agents, 0, -1, false), "\n") .. "\n"
  H.write_disk(AGENTS, original .. "Always run the fuzzers before merging.\n")
  H.wait("a drift diagnostic on " .. AGENTS, function()
    return #drift(agents) > 0
  end)
  R.drift = drift(agents)

  -- The open float follows by itself (rutter/runsChanged), no :RutterRuns needed.
  H.wait("the open runs float marking the run stale", function()
    local f = require("rutter.runs").float()
    return f and H.contains(f.lines, "⚠")
  end)
  R.stale = require("rutter.runs").float().lines
  R.runs_changed_events = changed_events
  require("rutter.runs").close()

  -- The code action, answered "Confirm refresh" when the server asks.
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      titles[#titles + 1] = opts.format_item and opts.format_item(item) or tostring(item)
    end
    asked[#asked + 1] = { prompt = opts.prompt, items = titles }
    for index, title in ipairs(titles) do
      if title == "Confirm refresh" or title:find("Review and confirm refresh", 1, true) then
        return on_choice(items[index], index)
      end
    end
    on_choice(nil, nil)
  end
  vim.api.nvim_set_current_buf(agents)
  vim.api.nvim_win_set_cursor(0, { R.drift[1].lnum + 1, 0 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title:find("Review and confirm refresh", 1, true) ~= nil
    end,
  })
  H.wait("the drift diagnostic to go after the confirmed refresh", function()
    return #drift(agents) == 0 and #asked > 0
  end)
  R.asked = asked
  R.review_buffer = vim.api.nvim_buf_get_name(0)
  R.review_lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)

  vim.cmd("RutterRuns")
  H.wait("the runs float after the refresh", function()
    local f = require("rutter.runs").float()
    return f and f.result and not H.contains(f.lines, "⚠")
  end)
  R.after = require("rutter.runs").float().lines
end)
