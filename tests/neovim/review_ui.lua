-- The reviewed refresh as a person at a terminal does it (a UI attached): the code action on
-- the drift diagnostic, the review document, the server's question answered with the keys a
-- person types into Neovim's own list (vim.ui.select's default, inputlist), then nothing
-- more to do: no "Press ENTER" prompt, the buffer still in its window, the review beside it.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local AGENTS = "services/api/internal/parser/AGENTS.md"
local TARGET = "services/api/internal/parser/input.go"

local function drift(buf)
  return vim.tbl_filter(function(d)
    return d.code == "instructions_drift"
  end, H.diagnostics(buf))
end

H.run_ui(function(R)
  require("rutter").setup({})
  local target = H.edit(TARGET)
  H.attached(target)
  local agents = H.edit(AGENTS)
  H.attached(agents)
  local original = table.concat(api.nvim_buf_get_lines(agents, 0, -1, false), "\n") .. "\n"
  H.write_disk(AGENTS, original .. "Always run the fuzzers before merging.\n")
  H.wait("a drift diagnostic", function()
    return #drift(agents) > 0
  end)
  -- The person types the number of "Confirm refresh" into the list Neovim shows.
  local select = vim.ui.select
  R.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    R.asked[#R.asked + 1] = opts.prompt
    api.nvim_input("1<CR>")
    return select(items, opts, on_choice)
  end
  R.windows_before = #api.nvim_tabpage_list_wins(0)
  R.source_win = api.nvim_get_current_win()
  api.nvim_win_set_cursor(0, { drift(agents)[1].lnum + 1, 0 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title:find("Review and confirm refresh", 1, true) ~= nil
    end,
  })
  H.wait("the confirmed refresh", function()
    return #drift(agents) == 0
  end)
  R.agents = agents
end, 1500, function(R)
  R.mode = vim.api.nvim_get_mode().mode
  R.windows = {}
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    R.windows[#R.windows + 1] = {
      buffer = api.nvim_buf_get_name(api.nvim_win_get_buf(win)),
      relative = api.nvim_win_get_config(win).relative,
      current = win == api.nvim_get_current_win(),
      source = win == R.source_win,
    }
  end
  R.source_buffer = api.nvim_buf_get_name(api.nvim_win_get_buf(R.source_win))
end)
