-- Confirmations as a person at a terminal makes them (a UI attached): the reviewed refresh
-- (the code action on the drift diagnostic, the review document, the server's question
-- answered with the keys a person types into Neovim's own list, vim.ui.select's default
-- inputlist()), then a fork from a checkpoint (the goal typed into vim.ui.input's default
-- input(), the question answered the same way). After each: no "Press ENTER" prompt, the
-- buffer still in its window, the review beside it.
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
  -- The person types the number of the first action ("Confirm refresh", "Fork") into the
  -- list Neovim shows, and a goal into its input line.
  local select, input = vim.ui.select, vim.ui.input
  R.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    R.asked[#R.asked + 1] = opts.prompt
    api.nvim_input("1<CR>")
    return select(items, opts, on_choice)
  end
  vim.ui.input = function(opts, on_confirm)
    R.asked[#R.asked + 1] = opts.prompt
    api.nvim_input("split the lexer<CR>")
    return input(opts, on_confirm)
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
  R.prompts_after_review = #H.prompts
  R.review_window_buffer = api.nvim_buf_get_name(0)
  R.review_lines = api.nvim_buf_get_lines(0, 0, -1, false)

  -- A fork, from the window of the source buffer.
  api.nvim_set_current_win(R.source_win)
  local forked = nil
  api.nvim_create_autocmd("User", {
    pattern = "RutterSession",
    callback = function(args)
      if args.data.action == "fork" then
        forked = args.data
      end
    end,
  })
  vim.cmd("RutterFork " .. vim.env.RUTTER_NVIM_NODE)
  H.wait("the fork", function()
    return forked
  end)
  R.fork = forked.result
  R.fork_error = forked.error or vim.NIL
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
