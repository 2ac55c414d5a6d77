-- Compaction in the session tree as a user drives it: :RutterCompact on a thread whose earlier
-- compaction is pending (its process died): the typed error with its hint, "Abandon" / "Retry"
-- offered through vim.ui.select, Retry chosen: the summary opens. :RutterTree then shows the
-- compaction as a projected node with what it covers; <CR> on it says so; `C` on the root
-- compacts the node's thread again (nothing new: the typed error with its hint).
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local events = {}
api.nvim_create_autocmd("User", {
  pattern = { "RutterCompaction", "RutterTreeUpdated" },
  callback = function(args)
    events[#events + 1] = { event = args.match, data = args.data or {} }
  end,
})

local function after(pattern, fn, pred)
  local before = #events
  fn()
  local found
  H.wait(pattern, function()
    for index = before + 1, #events do
      local e = events[index]
      if e.event == pattern and (pred == nil or pred(e.data)) then
        found = e.data
        return true
      end
    end
  end)
  return found
end

local asked, answers, prompts, inputs = {}, {}, {}, {}
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    titles[#titles + 1] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  asked[#asked + 1] = { prompt = opts.prompt, items = titles }
  local wanted = table.remove(answers, 1)
  for index, title in ipairs(titles) do
    if wanted and title == wanted then
      return on_choice(items[index], index)
    end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(opts, on_confirm)
  prompts[#prompts + 1] = opts.prompt
  on_confirm(table.remove(inputs, 1))
end
local notes = {}
local notify = vim.notify
vim.notify = function(message, level, opts)
  notes[#notes + 1] = { message = message, level = level }
  return notify(message, level, opts)
end

H.run(function(R)
  require("rutter").setup({})
  local main = H.edit("svc/main.go")
  H.attached(main)

  -- 1. The pending compaction: refused, Retry chosen, the summary opens.
  inputs = { "the lexer" }
  answers = { "Retry" }
  local pending = after("RutterCompaction", function()
    vim.cmd("RutterCompact")
  end)
  R.pending_error = pending.error
  for _, note in ipairs(notes) do
    if note.level == vim.log.levels.ERROR and not R.pending_note then
      R.pending_note = note.message
    end
  end
  local retried
  H.wait("the retried compaction", function()
    for _, e in ipairs(events) do
      if e.event == "RutterCompaction" and e.data.result ~= nil then
        retried = e.data.result
        return true
      end
    end
  end)
  R.asked = vim.deepcopy(asked)
  R.retried = retried
  R.summary_name = api.nvim_buf_get_name(api.nvim_get_current_buf())
  vim.cmd("close")

  -- 2. :RutterTree: the compaction as a projected node.
  local t
  after("RutterTreeUpdated", function()
    vim.cmd("RutterTree")
  end, function()
    t = require("rutter.tree").state()
    return t ~= nil
  end)
  R.tree_lines = t.lines
  local compaction_line, root_line
  for lnum, id in pairs(t.rows) do
    if vim.startswith(id, "cmp_") then
      compaction_line = lnum
    elseif vim.startswith(t.lines[lnum], "○") then
      root_line = lnum
    end
  end
  R.compaction_line = compaction_line and t.lines[compaction_line]
  -- <CR> on it: what it covers.
  api.nvim_win_set_cursor(t.win, { compaction_line, 0 })
  require("rutter.tree").open_row()
  R.open_note = notes[#notes].message

  -- 3. `C` on the root: the node's thread, the focus asked; nothing new to compact.
  api.nvim_set_current_win(t.win)
  api.nvim_win_set_cursor(t.win, { root_line, 0 })
  inputs = { "" }
  local again = after("RutterCompaction", function()
    H.press("C")
  end)
  R.again_error = again.error
  R.prompts = prompts
  R.last_error = require("rutter.compaction").last_error
  R.help = require("rutter.session_format").TREE_KEYS
end)
