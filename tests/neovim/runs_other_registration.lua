-- A run made through another registration of the served folder's project (a second checkout
-- on this machine): :RutterRuns shows it stale against the served files, and <CR> on its line
-- reviews and refreshes it against those files (vim.ui.select answered as a user would).
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)

local AGENTS = "services/api/internal/parser/AGENTS.md"
local TARGET = "services/api/internal/parser/input.go"

H.run(function(R)
  require("rutter").setup({})
  local target = H.edit(TARGET)
  H.attached(target)

  -- The served checkout moves on (on disk only: no buffer holds the file, so the server reads
  -- the disk); the other checkout keeps the pinned text.
  local original = table.concat(vim.fn.readfile(H.path(AGENTS), "b"), "\n")
  H.write_disk(AGENTS, original .. "Always run the fuzzers before merging.\n")

  vim.cmd("RutterRuns")
  H.wait("the runs float marking the other checkout's run stale", function()
    local f = require("rutter.runs").float()
    return f and H.contains(f.lines, "⚠")
  end)
  local float = require("rutter.runs").float()
  R.stale = float.lines
  R.listed = float.result.runs

  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      titles[#titles + 1] = opts.format_item and opts.format_item(item) or tostring(item)
    end
    asked[#asked + 1] = { prompt = opts.prompt, items = titles }
    for index, title in ipairs(titles) do
      if title == "Confirm refresh" then
        return on_choice(items[index], index)
      end
    end
    on_choice(nil, nil)
  end
  local reviewed = nil
  vim.api.nvim_create_autocmd("User", {
    pattern = "RutterRunReviewed",
    callback = function(args)
      reviewed = args.data
    end,
  })
  for lnum, line in ipairs(float.lines) do
    if line:find("⚠", 1, true) then
      vim.api.nvim_win_set_cursor(float.win, { lnum, 0 })
      break
    end
  end
  require("rutter.runs").review_row()
  H.wait("the review to end", function()
    return reviewed ~= nil
  end)
  R.asked = asked
  R.reviewed = reviewed

  vim.cmd("RutterRuns")
  H.wait("the runs float after the refresh", function()
    local f = require("rutter.runs").float()
    return f and f.result and not H.contains(f.lines, "⚠")
  end)
  R.after = require("rutter.runs").float().lines
end)
