--- Agent profiles in Neovim (issue 20): whose view the instruction float shows, and every
--- agent's view side by side.
---
--- Commands:
---   :RutterAgent [AGENT]  the float shows what AGENT (codex, claude, gemini, copilot, cursor)
---                         would load for the current buffer, or rutter's own stack (default);
---                         without AGENT a picker (vim.ui.select). The choice holds for the
---                         rest of the Neovim session and shows in the float's title.
---   :RutterAgents         a new tab with one column (window) per agent for the current file:
---                         the sources it loads in its order, where it cuts them, and which
---                         sources only some agents load. It follows changes of the
---                         instruction files on disk by itself.
---
--- Both ask the server's `rutter/effectiveInstructions` with a `profile`. `User RutterAgent`
--- fires on a switch (data: `agent`), `User RutterAgentsUpdated` when the columns are drawn
--- (data: `result`).
local M = {}

local api = vim.api
local fmt = require("rutter.agents_format")
local ui = require("rutter.ui")

--- What `:RutterAgent` accepts (completion, picker), "default" being rutter's own view.
M.CHOICES = { "default", "codex", "claude", "gemini", "copilot", "cursor" }

local chosen = nil --- @type string? nil: rutter's own view
local columns = nil --- @type table? the side-by-side: { tab, source_win, client_id, uri, target, windows, result }
local ns = api.nvim_create_namespace("rutter.agents")

--- The agent chosen for the float (nil: rutter's own, "default").
--- @return string?
function M.profile()
  return chosen
end

--- The choice's name for messages and tests ("default" when none).
function M.current()
  return chosen or "default"
end

--- Set the agent whose view the float shows (`nil` or "default": rutter's own), then show the
--- float for the current buffer (refreshed in place when it is open).
--- @param agent? string
function M.set(agent)
  if agent == nil or agent == "" then
    return M.pick()
  end
  if not vim.tbl_contains(M.CHOICES, agent) then
    ui.notify(
      "no agent profile by that name; choose one of " .. table.concat(M.CHOICES, ", "),
      vim.log.levels.ERROR
    )
    return
  end
  chosen = agent ~= "default" and agent or nil
  api.nvim_exec_autocmds("User", { pattern = "RutterAgent", modeline = false, data = { agent = M.current() } })
  local rutter = require("rutter")
  local float = rutter.float()
  if float and api.nvim_get_current_buf() == float.buf then
    rutter.reload()
  else
    rutter.show()
  end
end

--- Choose the agent through `vim.ui.select` (kind `rutter_agent`).
function M.pick()
  vim.ui.select(M.CHOICES, {
    prompt = "rutter: show instructions as which agent? ",
    kind = "rutter_agent",
    format_item = function(agent)
      local mark = agent == M.current() and " (current)" or ""
      return fmt.name(agent) .. mark
    end,
  }, function(agent)
    if agent then
      vim.schedule(function()
        M.set(agent)
      end)
    end
  end)
end

-- -- the side-by-side ------------------------------------------------------------------------------

local function valid_tab(st)
  return st and api.nvim_tabpage_is_valid(st.tab)
end

local function scratch(name)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].filetype = "rutter"
  return buf
end

local function open_row(st, win)
  local column = nil
  for _, item in ipairs(st.windows) do
    if item.win == win then
      column = item
    end
  end
  local path = column and column.rows[api.nvim_win_get_cursor(win)[1]]
  if not path then
    ui.notify("no file on this line")
    return
  end
  local abs = vim.startswith(path, "/") and path or (st.root and vim.fs.joinpath(st.root, path) or path)
  if api.nvim_win_is_valid(st.source_win) then
    api.nvim_set_current_win(st.source_win)
  else
    vim.cmd("tabnew")
  end
  vim.cmd.edit(vim.fn.fnameescape(abs))
end

function M.close()
  local st = columns
  columns = nil
  if valid_tab(st) and #api.nvim_list_tabpages() > 1 then
    api.nvim_set_current_tabpage(st.tab)
    vim.cmd("tabclose")
  end
end

local function keymaps(st, buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "rutter: " .. desc })
  end
  map("<CR>", function()
    open_row(st, api.nvim_get_current_win())
  end, "open file")
  map("R", M.reload, "reload the agents' views")
  map("q", M.close, "close the agents' views")
end

--- Draw the columns of `result` in `st`'s tab: one window per agent, left to right.
local function draw(st, result)
  st.result = result
  local views
  if type(result) == "table" and type(result.error) == "table" then
    local lines = require("rutter.format").lines(result, { target = st.target, footer = false })
    views = { { agent = "error", lines = lines, rows = {}, hl = { [1] = "Title" } } }
  else
    views = fmt.columns(result, function(path)
      -- A link and the file it leads to are one file: compared by real path.
      local abs = st.root and vim.fs.joinpath(st.root, path) or path
      return vim.uv.fs_realpath(abs)
    end)
  end
  local previous = api.nvim_get_current_tabpage()
  local wins = api.nvim_tabpage_list_wins(st.tab)
  local reshape = #wins ~= #views
  if reshape or st.focus then
    api.nvim_set_current_tabpage(st.tab)
  end
  while #wins < #views do
    api.nvim_set_current_win(wins[#wins])
    vim.cmd("rightbelow vsplit")
    wins = api.nvim_tabpage_list_wins(st.tab)
  end
  while #wins > #views and #wins > 1 do
    api.nvim_win_close(wins[#wins], true)
    wins = api.nvim_tabpage_list_wins(st.tab)
  end
  st.windows = {}
  for index, view in ipairs(views) do
    local win = wins[index]
    local buf = api.nvim_win_get_buf(win)
    if vim.b[buf].rutter_agents ~= view.agent then
      buf = scratch("rutter://agents/" .. view.agent)
      vim.b[buf].rutter_agents = view.agent
      api.nvim_win_set_buf(win, buf)
      keymaps(st, buf)
    end
    ui.set_lines(buf, ns, view.lines, view.hl)
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].number = false
    vim.wo[win].relativenumber = false
    vim.wo[win].cursorline = true
    vim.wo[win].winbar = " " .. (view.agent == "error" and "rutter" or fmt.name(view.agent)) .. " · " .. st.target
    st.windows[index] = { agent = view.agent, win = win, buf = buf, lines = view.lines, rows = view.rows }
  end
  if reshape or st.focus then
    vim.cmd("wincmd =")
    api.nvim_set_current_win(st.windows[1].win)
    if previous ~= st.tab and not st.focus then
      api.nvim_set_current_tabpage(previous)
    end
  end
  st.focus = nil
  api.nvim_exec_autocmds("User", { pattern = "RutterAgentsUpdated", modeline = false, data = { result = result } })
end

--- When `all` fails (one agent's view fails closed, e.g. on a file only it reads), ask each
--- agent alone, so the others still show and the failing one shows its error; when every
--- agent fails the same way (the file is in no workspace, the server stopped), one error.
local function each_agent(st, client, bufnr, done)
  local answers, pending = {}, #fmt.AGENTS
  for index, agent in ipairs(fmt.AGENTS) do
    require("rutter").request(client, st.uri, bufnr, function(result)
      answers[index] = type(result.error) == "table" and { agent = agent, error = result.error } or result
      pending = pending - 1
      if pending > 0 then
        return
      end
      local codes = {}
      for _, answer in ipairs(answers) do
        codes[type(answer.error) == "table" and tostring(answer.error.code) or ""] = true
      end
      if next(codes, next(codes)) == nil and not codes[""] then
        return done({ error = answers[1].error })
      end
      done({ profiles = answers })
    end, agent)
  end
end

local function fetch(st)
  local client = vim.lsp.get_client_by_id(st.client_id)
  if not client then
    return draw(st, { error = { code = "not_running", message = "the rutter language server has stopped" } })
  end
  local bufnr = api.nvim_buf_is_valid(st.source_buf) and st.source_buf or api.nvim_get_current_buf()
  local function show(result)
    vim.schedule(function()
      if columns == st and valid_tab(st) then
        draw(st, result)
      end
    end)
  end
  require("rutter").request(client, st.uri, bufnr, function(result)
    if type(result.error) == "table" then
      return each_agent(st, client, bufnr, show)
    end
    show(result)
  end, "all")
end

--- `R` in a column: ask again for the same file.
function M.reload()
  local st = columns
  if valid_tab(st) then
    st.focus = true
    fetch(st)
  end
end

--- `:RutterAgents`: every agent's view of the current buffer's file, side by side in a new tab
--- (the tab of an earlier `:RutterAgents` is reused; run in that tab, it reloads).
function M.side_by_side()
  if valid_tab(columns) and api.nvim_get_current_tabpage() == columns.tab then
    return M.reload() -- asked from the columns themselves: ask again for the same file
  end
  local bufnr = api.nvim_get_current_buf()
  local rutter = require("rutter")
  local client = rutter.client_for(bufnr)
  local name = api.nvim_buf_get_name(bufnr)
  if not client or name == "" or vim.bo[bufnr].buftype ~= "" then
    ui.notify(
      "no rutter language server for this buffer: open a file inside a project (a .git, "
        .. "AGENTS.md, CLAUDE.md or .prayu above it) first",
      vim.log.levels.WARN
    )
    return
  end
  local root = client.root_dir
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  local target = path
  if root and vim.startswith(path, root .. "/") then
    target = path:sub(#root + 2)
  end
  local source_win = api.nvim_get_current_win()
  local st = columns
  if not valid_tab(st) then
    vim.cmd("tabnew")
    local empty = api.nvim_get_current_buf()
    st = { tab = api.nvim_get_current_tabpage(), windows = {} }
    vim.bo[empty].bufhidden = "wipe"
    columns = st
  end
  assert(st)
  if api.nvim_win_get_tabpage(source_win) ~= st.tab then
    st.source_win = source_win -- not a column of an earlier :RutterAgents
  end
  st.source_buf, st.client_id, st.uri = bufnr, client.id, vim.uri_from_bufnr(bufnr)
  st.root, st.target, st.focus = root, target, true
  api.nvim_set_current_tabpage(st.tab)
  fetch(st)
end

--- What the side-by-side shows (for tests and scripts), or nil.
function M.state()
  local source_win = api.nvim_get_current_win()
  local st = columns
  if not valid_tab(st) then
    return nil
  end
  local windows = {}
  for index, item in ipairs(st.windows or {}) do
    local rows = {}
    for row, path in pairs(item.rows or {}) do
      rows[tostring(row)] = path
    end
    windows[index] = {
      agent = item.agent,
      win = item.win,
      buf = item.buf,
      lines = item.lines,
      rows = rows,
      winbar = api.nvim_win_is_valid(item.win) and vim.wo[item.win].winbar or nil,
    }
  end
  return vim.deepcopy({ tab = st.tab, target = st.target, windows = windows, result = st.result })
end

--- `User RutterInstructionsChanged` (an instruction file changed on disk): redraw the columns
--- of the same client in place, without moving the cursor to them.
local function on_instructions_changed(args)
  local st = columns
  local data = args.data or {}
  if valid_tab(st) and data.client_id == st.client_id then
    fetch(st)
  end
end

function M.init()
  api.nvim_create_autocmd("User", {
    group = api.nvim_create_augroup("rutter.agents", { clear = true }),
    pattern = "RutterInstructionsChanged",
    callback = on_instructions_changed,
  })
  api.nvim_create_user_command("RutterAgent", function(opts)
    M.set(opts.fargs[1])
  end, {
    nargs = "?",
    complete = function(lead)
      return vim.tbl_filter(function(agent)
        return vim.startswith(agent, lead)
      end, M.CHOICES)
    end,
    desc = "rutter: show the instruction float as one agent would load it",
  })
  api.nvim_create_user_command("RutterAgents", function()
    M.side_by_side()
  end, { desc = "rutter: what each agent would load for this file, side by side" })
end

return M
