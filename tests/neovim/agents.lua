-- Agent profiles as a user drives them: :RutterAgent (argument, completion, the float's `a`
-- picker, a bad name), the choice kept for other buffers, :RutterAgents (one column per agent,
-- <CR> opening a file), and the agents' diagnostics on instruction files.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local events = {}
api.nvim_create_autocmd("User", {
  pattern = { "RutterAgent", "RutterAgentsUpdated" },
  callback = function(args)
    events[#events + 1] = { event = args.match, data = args.data or {} }
  end,
})

local asked, answers = {}, {}
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

local function float_as(agent)
  return function(f)
    return f.agent == agent and type(f.result) == "table"
      and (agent == nil) == (f.result.agent == nil)
  end
end

local function snap(f)
  local data = H.float_data(f)
  data.title = f.title
  data.agent = f.agent or vim.NIL
  return data
end

H.run(function(R)
  require("rutter").setup({})
  local main = H.edit("svc/main.go")
  H.attached(main)

  R.default = snap(H.float_after("RutterInstructions", "the default float", float_as(nil)))
  R.codex = snap(H.float_after("RutterAgent codex", "the float as Codex", float_as("codex")))
  R.float_focused = api.nvim_get_current_win() == H.float().win

  -- `a` in the float: the picker, answered "Claude Code".
  answers = { "Claude Code" }
  local before = #H.updates()
  H.press("a")
  H.wait("the float as Claude Code", function()
    local f = H.float()
    return f and #H.updates() > before and float_as("claude")(f)
  end)
  R.claude = snap(H.float())
  R.pick_asked = asked[#asked]

  -- The choice holds for another buffer of the session.
  vim.cmd("close")
  local agents_file = H.edit("svc/AGENTS.md")
  H.attached(agents_file)
  R.other_buffer = snap(H.float_after("RutterInstructions", "the float as Claude Code again", float_as("claude")))
  vim.cmd("close")

  -- Completion, and a name that is no agent (refused; the choice stays).
  R.completion = vim.fn.getcompletion("RutterAgent c", "cmdline")
  local ok, refused = pcall(vim.cmd, "RutterAgent vim")
  R.bad_name = { ok = ok, error = tostring(refused) }
  R.after_bad_name = require("rutter.agents").current()

  -- Back to rutter's own view.
  vim.cmd.buffer(main)
  R.back_default = snap(H.float_after("RutterAgent default", "the default float again", float_as(nil)))
  vim.cmd("close")

  -- :RutterAgents: a new tab, one column per agent.
  local source_win = api.nvim_get_current_win()
  local tabs_before = #api.nvim_list_tabpages()
  local updated = #events
  vim.cmd("RutterAgents")
  H.wait("the agents side by side", function()
    for index = updated + 1, #events do
      if events[index].event == "RutterAgentsUpdated" then
        return true
      end
    end
  end)
  local st = require("rutter.agents").state()
  R.columns = st
  R.tabs = { before = tabs_before, after = #api.nvim_list_tabpages() }
  R.columns_focused = api.nvim_get_current_tabpage() == st.tab
  R.column_wins = #api.nvim_tabpage_list_wins(st.tab)
  -- <CR> on Codex's svc/AGENTS.md row opens it in the window :RutterAgents came from.
  local codex = st.windows[1]
  local row
  for r, path in pairs(codex.rows) do
    if path == "svc/AGENTS.md" and (row == nil or tonumber(r) < row) then
      row = tonumber(r)
    end
  end
  api.nvim_set_current_win(codex.win)
  api.nvim_win_set_cursor(codex.win, { row, 0 })
  H.press("<CR>")
  R.opened = {
    win_is_source = api.nvim_get_current_win() == source_win,
    name = api.nvim_buf_get_name(0),
  }
  -- `q` in a column closes the tab.
  api.nvim_set_current_tabpage(st.tab)
  H.press("q")
  R.tabs_after_close = #api.nvim_list_tabpages()

  -- Diagnostics of the agents on instruction files.
  R.diagnostics = {}
  for key, rel in pairs({
    cut = "svc/AGENTS.md",
    not_read = "docs/AGENTS.md",
    rule = ".cursor/rules/rust.mdc",
  }) do
    local buf = H.edit(rel)
    H.attached(buf)
    H.wait("agent diagnostics on " .. rel, function()
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if d.source == "rutter" and d.code ~= nil then
          return true
        end
      end
    end)
    R.diagnostics[key] = H.diagnostics(buf)
    R.diagnostics[key .. "_filetype"] = vim.bo[buf].filetype
  end

  -- No project: a scratch buffer gets a message, no tab.
  vim.cmd("enew")
  local tabs = #api.nvim_list_tabpages()
  vim.cmd("RutterAgents")
  R.scratch_tabs = { before = tabs, after = #api.nvim_list_tabpages() }
  R.agent_events = events
end)
