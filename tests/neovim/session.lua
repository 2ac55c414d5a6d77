-- Session continuity as a user drives it: :RutterCheckpoint, :RutterTree (folds, drift
-- markers, keys f / r / m / <CR> / ?), :RutterCompare with and without arguments, :RutterFork
-- and :RutterResume with pickers, the server's question answered (and declined) through
-- vim.ui.select, and the tree following a checkpoint made by the CLI (rutter/sessionsChanged).
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local TARGET = "services/api/internal/parser/input.go"
local AGENTS = "services/api/internal/parser/AGENTS.md"

local events = {}
api.nvim_create_autocmd("User", {
  pattern = { "RutterSession", "RutterSessionsChanged", "RutterTreeUpdated" },
  callback = function(args)
    events[#events + 1] = { event = args.match, data = args.data or {} }
  end,
})

--- Run `fn`, then wait for the next `pattern` event (with `action`, if given); return its data.
local function after(pattern, action, fn)
  local before = #events
  fn()
  local found
  H.wait(pattern .. " " .. (action or ""), function()
    for index = before + 1, #events do
      local e = events[index]
      if e.event == pattern and (action == nil or e.data.action == action) then
        found = e.data
        return true
      end
    end
  end)
  return found
end

-- Questions (vim.ui.select) and inputs (vim.ui.input), answered from queues and recorded.
local asked, answers, inputs, typed = {}, {}, {}, {}
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    titles[#titles + 1] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  asked[#asked + 1] = { prompt = opts.prompt, items = titles, kind = opts.kind }
  local wanted = table.remove(answers, 1)
  for index, title in ipairs(titles) do
    if wanted and title:find(wanted, 1, true) then
      return on_choice(items[index], index)
    end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(opts, on_confirm)
  typed[#typed + 1] = opts.prompt
  on_confirm(table.remove(inputs, 1))
end

local function tree()
  return require("rutter.tree").state()
end

local function tree_after(fn, pred)
  local before = #events
  fn()
  H.wait("the tree to update", function()
    for index = before + 1, #events do
      if events[index].event == "RutterTreeUpdated" then
        local t = tree()
        if t and (pred == nil or pred(t)) then
          return true
        end
      end
    end
  end)
  return tree()
end

local function line_of(t, node_id)
  for lnum, id in pairs(t.rows) do
    if id == node_id then
      return lnum
    end
  end
  error("no tree line for " .. node_id)
end

local function lines(buf)
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

H.run(function(R)
  require("rutter").setup({})
  local source = H.edit(TARGET)
  H.attached(source)
  local source_win = api.nvim_get_current_win()
  local run_id = vim.env.RUTTER_NVIM_RUN

  -- 1. :RutterCheckpoint with a title: the current run (the workspace's only active run).
  local cp = after("RutterSession", "checkpoint", function()
    vim.cmd("RutterCheckpoint before the parser rewrite")
  end)
  R.checkpoint = cp.result
  R.current_after_checkpoint = require("rutter.session").current("monorepo")
  -- Without a title, it is asked for.
  inputs = { "second checkpoint" }
  local cp2 = after("RutterSession", "checkpoint", function()
    vim.cmd("RutterCheckpoint")
  end)
  R.checkpoint2 = cp2.result
  R.typed_title = typed[1]

  -- 2. :RutterTree: a split beside the source window, one line per node.
  local t = tree_after(function()
    vim.cmd("RutterTree")
  end)
  R.tree_lines = t.lines
  R.tree_win = {
    relative = api.nvim_win_get_config(t.win).relative,
    buftype = vim.bo[t.buf].buftype,
    modifiable = vim.bo[t.buf].modifiable,
    foldmethod = vim.wo[t.win].foldmethod,
    source_still_shown = api.nvim_win_is_valid(source_win) and api.nvim_win_get_buf(source_win) == source,
    focused = api.nvim_get_current_win() == t.win,
  }

  -- 3. `f` on the first checkpoint: the goal is asked, the server asks (Fork), a branch.
  api.nvim_win_set_cursor(t.win, { line_of(t, R.checkpoint.node_id), 0 })
  inputs = { "try a table-driven parser" }
  answers = { "Fork" }
  local asked_before = #asked
  local forked = after("RutterSession", "fork", function()
    H.press("f")
  end)
  R.fork = forked.result
  R.fork_questions = vim.list_slice(asked, asked_before + 1)
  t = tree_after(function() end, function(now)
    return vim.tbl_contains(vim.tbl_values(now.rows), R.fork.node_id)
  end)
  R.tree_after_fork = t.lines
  local fork_line = line_of(t, R.fork.node_id)
  R.fork_line = fork_line
  R.levels = t.levels
  R.current_after_fork = require("rutter.session").current("monorepo")
  api.nvim_win_call(t.win, function()
    R.fork_foldlevel = vim.fn.foldlevel(fork_line)
    vim.cmd(fork_line .. "foldclose")
    R.fork_foldclosed = vim.fn.foldclosed(fork_line)
    vim.cmd(fork_line .. "foldopen")
  end)

  -- 4. The same fork declined: nothing is created.
  api.nvim_win_set_cursor(t.win, { line_of(t, R.checkpoint.node_id), 0 })
  inputs = { "never made" }
  answers = { "Cancel" }
  asked_before = #asked
  R.declined = after("RutterSession", "fork", function()
    H.press("f")
  end).result
  R.declined_questions = vim.list_slice(asked, asked_before + 1)

  -- 5. Drift: the instruction file changes on disk; `R` reloads and marks every node.
  H.write_disk(AGENTS, "# Parser\n\nAlways fuzz before merging.\n")
  local commit = vim.system({
    "git", "-C", H.ws, "-c", "user.email=t@example.com", "-c", "user.name=t",
    "commit", "-q", "--allow-empty", "-m", "next",
  }):wait(30000)
  assert(commit.code == 0, commit.stderr)
  t = tree_after(function()
    api.nvim_set_current_win(t.win)
    H.press("R")
  end, function(now)
    return H.contains(now.lines, "⚠ instructions changed") and H.contains(now.lines, "⚠ git head")
  end)
  R.tree_drift = t.lines
  R.tree_drift_marks = {}
  for _, mark in ipairs(api.nvim_buf_get_extmarks(t.buf, -1, 0, -1, { details = true })) do
    local d = mark[4]
    if d.hl_group then
      R.tree_drift_marks[#R.tree_drift_marks + 1] = { mark[2], mark[3], d.end_col, d.hl_group }
    end
  end

  -- 6. `<CR>` on the first checkpoint: its detail in a scratch split.
  api.nvim_win_set_cursor(t.win, { line_of(t, R.checkpoint.node_id), 0 })
  local detail = after("RutterSession", "node", function()
    H.press("<CR>")
  end)
  R.detail = { name = api.nvim_buf_get_name(detail.buf), lines = lines(detail.buf), buftype = vim.bo[detail.buf].buftype }
  R.tree_still_open = tree() ~= nil and api.nvim_win_is_valid(tree().win)
  vim.cmd("close")

  -- 7. `?` lists the keys in a float.
  api.nvim_set_current_win(t.win)
  H.press("?")
  local help = require("rutter.tree").help_win()
  R.help = help and lines(api.nvim_win_get_buf(help)) or vim.NIL
  H.press("q")
  R.help_closed = require("rutter.tree").help_win() == nil

  -- 7b. `c` on the fork's line: a checkpoint of the fork's run, shown in the tree.
  api.nvim_set_current_win(t.win)
  api.nvim_win_set_cursor(t.win, { line_of(tree(), R.fork.node_id), 0 })
  inputs = { "fork checkpoint" }
  R.tree_checkpoint = after("RutterSession", "checkpoint", function()
    H.press("c")
  end).result
  H.wait("the tree to show the fork's checkpoint", function()
    return H.contains(tree().lines, '"fork checkpoint"')
  end)

  -- 8. `m` twice: checkpoint (A) and the fork's branch marker (B) compared side by side.
  api.nvim_set_current_win(t.win)
  api.nvim_win_set_cursor(t.win, { line_of(t, R.checkpoint.node_id), 0 })
  H.press("m")
  R.marked_line = tree().lines[line_of(tree(), R.checkpoint.node_id)]
  api.nvim_win_set_cursor(t.win, { line_of(tree(), R.fork.node_id), 0 })
  local compared = after("RutterSession", "compare", function()
    H.press("m")
  end)
  R.compare_differ = compared.differ
  R.compare_a = lines(compared.buffers[1])
  R.compare_b = lines(compared.buffers[2])
  local diff_wins = 0
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if vim.wo[win].diff then
      diff_wins = diff_wins + 1
    end
  end
  R.compare_diff_windows = diff_wins
  vim.cmd("tabclose")

  -- 9. :RutterCompare A B by argument, and with pickers for both.
  api.nvim_set_current_win(source_win)
  local by_args = after("RutterSession", "compare", function()
    vim.cmd("RutterCompare " .. R.checkpoint.node_id .. " " .. R.checkpoint2.node_id)
  end)
  R.compare_args_differ = by_args.differ
  vim.cmd("tabclose")
  answers = { "second checkpoint", "before the parser rewrite" }
  asked_before = #asked
  local picked = after("RutterSession", "compare", function()
    vim.cmd("RutterCompare")
  end)
  R.compare_picked = { a = picked.result.a.node_id, b = picked.result.b.node_id }
  R.compare_pickers = vim.list_slice(asked, asked_before + 1)
  vim.cmd("tabclose")

  -- 10. :RutterResume with the picker; the server asks; the new run becomes current.
  api.nvim_set_current_win(source_win)
  answers = { "second checkpoint", "Resume" }
  asked_before = #asked
  R.resume = after("RutterSession", "resume", function()
    vim.cmd("RutterResume")
  end).result
  R.resume_questions = vim.list_slice(asked, asked_before + 1)
  R.current_after_resume = require("rutter.session").current("monorepo")

  -- 11. :RutterFork NODE by argument (goal asked, server asks).
  inputs = { "second idea" }
  answers = { "Fork" }
  R.fork2 = after("RutterSession", "fork", function()
    vim.cmd("RutterFork " .. R.checkpoint2.node_id)
  end).result

  -- 12. The CLI checkpoints the resumed run: the server notices, the open tree follows.
  local changed_before = #events
  local cli = vim.system({
    vim.env.RUTTER_NVIM_PYTHON, "-m", "rutter", "session", "checkpoint", R.resume.run_id,
    "--title", "made by the CLI", "--json",
  }, { text = true }):wait(30000)
  R.cli = { code = cli.code, stderr = cli.stderr }
  H.wait("the tree to show the CLI's checkpoint", function()
    local now = tree()
    return now and H.contains(now.lines, '"made by the CLI"')
  end)
  R.sessions_changed = {}
  for index = changed_before + 1, #events do
    if events[index].event == "RutterSessionsChanged" then
      R.sessions_changed[#R.sessions_changed + 1] = events[index].data
    end
  end
  R.tree_final = tree().lines

  -- 13. Several active runs and none chosen: :RutterCheckpoint asks which run is current.
  require("rutter.session").set_current("monorepo", nil)
  api.nvim_set_current_win(source_win)
  answers = { run_id }
  asked_before = #asked
  R.picked_checkpoint = after("RutterSession", "checkpoint", function()
    vim.cmd("RutterCheckpoint picked run")
  end).result
  R.run_picker = asked[asked_before + 1]
  R.current_after_pick = require("rutter.session").current("monorepo")
  R.final_run = tree().run_id
  R.run_id = run_id
  R.typed = typed
end)
