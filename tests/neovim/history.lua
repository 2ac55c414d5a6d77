-- :RutterHistory as a user drives it: the query asked, the picker (vim.ui.select) with
-- "more…" loading the next page, a long hit read page by page (]p, [p), a hit changed by the
-- CLI (conflict) and one disabled (gone) shown as errors without text, a refused query, and a
-- buffer in no served workspace searching user memories only.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local events = {}
api.nvim_create_autocmd("User", {
  pattern = "RutterHistory",
  callback = function(args)
    events[#events + 1] = args.data or {}
  end,
})

--- Run `fn`, then wait for the next RutterHistory event of `action`; return its data.
local function after(action, fn)
  local before = #events
  fn()
  local found
  H.wait("RutterHistory " .. action, function()
    for index = before + 1, #events do
      if events[index].action == action then
        found = events[index]
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
  prompts[#prompts + 1] = opts.prompt
  on_confirm(table.remove(inputs, 1))
end

local function cli(...)
  local done = vim.system({ vim.env.RUTTER_NVIM_PYTHON, "-m", "rutter", ... }, { text = true }):wait(60000)
  return { code = done.code, stderr = done.stderr }
end

local function reader_view()
  local buf = api.nvim_get_current_buf()
  return {
    name = api.nvim_buf_get_name(buf),
    lines = api.nvim_buf_get_lines(buf, 0, -1, false),
    winbar = vim.wo.winbar,
    buftype = vim.bo[buf].buftype,
    modifiable = vim.bo[buf].modifiable,
    swapfile = vim.bo[buf].swapfile,
    bufhidden = vim.bo[buf].bufhidden,
    reader = require("rutter.history").reader(buf),
  }
end

H.run(function(R)
  require("rutter").setup({})
  local main = H.edit("svc/main.go")
  H.attached(main)

  -- No query: asked; page 1, then "more…" for page 2, then the long message.
  inputs = { "不可恢复" }
  answers = { "more…", "LONG-MARK" }
  local read = after("read", function()
    vim.cmd("RutterHistory")
  end)
  R.prompts = prompts
  R.pickers = vim.deepcopy(asked)
  R.searches = vim.tbl_map(function(e)
    return { hits = #(e.result and e.result.hits or {}), more = e.result and e.result.next_cursor or vim.NIL, run_id = e.run_id or vim.NIL, workspace_id = e.workspace_id or vim.NIL }
  end, vim.tbl_filter(function(e)
    return e.action == "search"
  end, events))
  R.page1 = reader_view()
  R.page1.pages = read.result.pages
  R.reader_win_is_split = api.nvim_win_get_config(0).relative == "" and #api.nvim_tabpage_list_wins(0) == 2
  after("read", function()
    H.press("]p")
  end)
  R.page2 = reader_view()
  after("read", function()
    H.press("]p")
  end)
  R.page3 = reader_view()
  H.press("]p") -- past the end: a message, no request
  R.past_end = require("rutter.history").reader().page
  after("read", function()
    H.press("[p")
  end)
  R.back = reader_view()
  -- From the reader: the same workspace and run are searched.
  asked = {}
  after("search", function()
    vim.cmd("RutterHistory step 3")
  end)
  R.from_reader = vim.deepcopy(asked)
  vim.cmd("close")

  -- The note, then changed by the CLI: `R` re-reads it, conflict, no text.
  asked = {}
  answers = { "note" }
  after("read", function()
    vim.cmd("RutterHistory 不可恢复")
  end)
  R.note = reader_view()
  R.note_edit = cli("session", "note", "edit", vim.env.RUTTER_NVIM_NOTE, "--version", "1", "--text", "changed by the CLI")
  R.conflict_event = after("read", function()
    H.press("R")
  end)
  R.conflict = reader_view()
  vim.cmd("close")

  -- The project memory, then disabled by the CLI: gone, no text.
  answers = { "project 不可恢复 memory" }
  after("read", function()
    vim.cmd("RutterHistory 不可恢复")
  end)
  R.memory = reader_view()
  R.memory_disable = cli("context", "memory", "disable", vim.env.RUTTER_NVIM_MEMORY, "--version", "1")
  R.gone_event = after("read", function()
    H.press("R")
  end)
  R.gone = reader_view()
  vim.cmd("close")

  -- A refused query (over 256 characters): the typed error, no picker.
  asked = {}
  local refused = after("search", function()
    pcall(vim.cmd, "RutterHistory " .. string.rep("x", 300))
  end)
  R.refused = { error = refused.error, pickers = #asked }

  -- No hit: a message, no picker.
  asked = {}
  after("search", function()
    vim.cmd("RutterHistory no-such-text-anywhere")
  end)
  R.no_hit_pickers = #asked

  -- An empty answer to the question: nothing is searched.
  inputs = { "" }
  local searches = #events
  vim.cmd("RutterHistory")
  R.empty_query_events = #events - searches

  -- A buffer in no served workspace: user memories only.
  vim.cmd("enew")
  asked = {}
  answers = {}
  after("search", function()
    vim.cmd("RutterHistory 不可恢复")
  end)
  R.no_workspace = vim.deepcopy(asked)
  R.no_workspace_event = events[#events]
end)
