--- rutter for Neovim 0.11+: the effective instruction stack of the file in front of you.
---
--- `require("rutter").setup(opts)` configures and enables the `rutter` language server
--- (lsp/rutter.lua) and defines `:RutterInstructions` and `:RutterInstructionsRefresh`.
local M = {}

local api = vim.api
local ui = require("rutter.ui")

local NAME = "rutter"
M.METHOD = "rutter/effectiveInstructions"
M.CHANGED = "rutter/instructionsChanged"

--- @class rutter.Options
--- @field cmd? string[] server command (default: lsp/rutter.lua's `{ "rutter-lsp" }`)
--- @field enable? boolean call `vim.lsp.enable("rutter")` (default true)
--- @field watch_files? boolean watch instruction files on disk for live updates (default true)
--- @field codelens? boolean show the code lens on instruction files (default true)
--- @field settings? table `rutter` settings: `databaseUrl`, `logLevel`
--- @field keymaps? { instructions?: string|false, refresh?: string|false } normal-mode keys
--- @field hover_border? string|string[]|false border of the hover window that `K` opens in
---   buffers rutter attaches to (default "rounded"; false: Neovim's own `K`, which follows
---   'winborder')
local defaults = {
  cmd = nil,
  enable = true,
  watch_files = true,
  codelens = true,
  hover_border = "rounded",
  settings = nil,
  keymaps = { instructions = false, refresh = false },
}

--- @type rutter.Options
M.options = vim.deepcopy(defaults)

local float_ns = api.nvim_create_namespace("rutter.float")
local group = nil --- @type integer?

--- The open float, if any.
--- @class rutter.Float
--- @field win integer
--- @field buf integer
--- @field source_buf integer buffer the stack is about
--- @field source_win integer window to open files in
--- @field uri string
--- @field client_id integer
--- @field workspace_id? string
--- @field root? string workspace folder path that relative paths resolve against
--- @field target string
--- @field agent? string the agent whose view it shows (nil: rutter's own snapshot)
--- @field lines string[]
--- @field rows table<integer, string>
--- @field result? table
local float = nil --- @type rutter.Float?
local seq = 0

local function notify(message, level)
  ui.notify(message, level)
end

--- Whether a path names an instruction file or the ignore file (docs/reference/discovery.md).
--- @param path string
--- @return boolean
function M.is_instruction_file(path)
  path = path:gsub("\\", "/")
  local tail = path:match("[^/]+$") or ""
  if tail == "AGENTS.md" or tail == "AGENTS.override.md" or tail == "CLAUDE.md" then
    return true
  end
  return path:find("/.prayu/", 1, true) ~= nil or vim.startswith(path, ".prayu/")
end

-- -- clients and workspace folders ------------------------------------------------------------

local function buf_path(bufnr)
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" then
    return nil
  end
  return vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
end

local function within(path, dir)
  dir = dir:gsub("/$", "")
  return path == dir or vim.startswith(path, dir .. "/")
end

--- The deepest workspace folder of `client` containing `path`.
local function folder_of(client, path)
  if path == nil then
    return nil
  end
  local real = vim.uv.fs_realpath(path) or path
  local best = nil
  local folders = client.workspace_folders or {}
  if #folders == 0 and client.root_dir then
    folders = { { uri = vim.uri_from_fname(client.root_dir) } }
  end
  for _, folder in ipairs(folders) do
    local dir = vim.fs.normalize(vim.uri_to_fname(folder.uri))
    local real_dir = vim.uv.fs_realpath(dir) or dir
    local inside = within(path, dir) or within(real, real_dir)
    if inside and (best == nil or #dir > #best) then
      best = dir
    end
  end
  return best
end

--- The running rutter client for a buffer: attached to it, else one serving its folder.
--- @param bufnr integer
--- @return vim.lsp.Client?
function M.client_for(bufnr)
  local attached = vim.lsp.get_clients({ bufnr = bufnr, name = NAME })
  if attached[1] then
    return attached[1]
  end
  local path = buf_path(bufnr)
  for _, client in ipairs(vim.lsp.get_clients({ name = NAME })) do
    if folder_of(client, path) then
      return client
    end
  end
  return nil
end

local function relative(root, path)
  if root and path and within(path, root) and path ~= root then
    return path:sub(#root:gsub("/$", "") + 2)
  end
  return path
end

-- -- the float ----------------------------------------------------------------------------------

local function display_height(lines, width)
  local height = 0
  for _, line in ipairs(lines) do
    local w = vim.fn.strdisplaywidth(line)
    if w <= width then
      height = height + 1
    else
      -- Wrapped at word boundaries with a hanging indent: leave some slack per row.
      height = height + math.ceil(w / math.max(10, width - 12))
    end
  end
  return height
end

local function geometry(lines)
  local longest = 0
  for _, line in ipairs(lines) do
    longest = math.max(longest, vim.fn.strdisplaywidth(line))
  end
  local max_width = math.max(20, math.min(120, vim.o.columns - 4))
  local width = math.min(max_width, math.max(longest, 40))
  local max_height = math.max(3, vim.o.lines - vim.o.cmdheight - 4)
  local height = math.min(max_height, math.max(1, display_height(lines, width)))
  return {
    relative = "editor",
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
  }
end

--- Close the float (no-op when none is open).
function M.close()
  local st = float
  float = nil
  if st and api.nvim_win_is_valid(st.win) then
    api.nvim_win_close(st.win, true)
  end
end

--- `<CR>` in the float: open the file on the cursor's line in the window the float came from.
function M.open_row()
  local st = float
  if not st or not api.nvim_win_is_valid(st.win) then
    return
  end
  local row = api.nvim_win_get_cursor(st.win)[1]
  local path = st.rows[row]
  if not path then
    notify("no file on this line")
    return
  end
  local abs = path
  if not vim.startswith(path, "/") and st.root then
    abs = vim.fs.joinpath(st.root, path)
  end
  M.close()
  if api.nvim_win_is_valid(st.source_win) then
    api.nvim_set_current_win(st.source_win)
  end
  vim.cmd.edit(vim.fn.fnameescape(abs))
end

--- The float's title: which agent's view it shows (`:RutterAgent`), when not rutter's own.
local function title_for(agent)
  if agent == nil then
    return " rutter instructions "
  end
  return " rutter instructions · as " .. require("rutter.agents_format").name(agent) .. " "
end

local function create_float(lines, agent)
  local buf = api.nvim_create_buf(false, true) -- buftype=nofile: no LSP client attaches
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  local config = geometry(lines)
  config.style = "minimal"
  config.border = "rounded"
  config.title = title_for(agent)
  config.title_pos = "center"
  local win = api.nvim_open_win(buf, true, config)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].breakindent = true
  vim.wo[win].breakindentopt = "shift:2"
  vim.wo[win].cursorline = true
  vim.bo[buf].filetype = "rutter"
  local opts = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set("n", "q", M.close, vim.tbl_extend("force", opts, { desc = "rutter: close" }))
  vim.keymap.set("n", "<CR>", M.open_row, vim.tbl_extend("force", opts, { desc = "rutter: open file" }))
  vim.keymap.set("n", "R", function()
    M.refresh()
  end, vim.tbl_extend("force", opts, { desc = "rutter: refresh" }))
  vim.keymap.set("n", "a", function()
    require("rutter.agents").pick()
  end, vim.tbl_extend("force", opts, { desc = "rutter: choose the agent whose view to show" }))
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(win),
    once = true,
    callback = function()
      if float and float.win == win then
        float = nil
      end
    end,
  })
  return win, buf
end

--- Draw `result` for `source` (creating the float, or updating it in place).
local function render(source, result)
  local format = require("rutter.format")
  local lines, rows, hl = format.lines(result, { target = source.target, agent = source.agent })
  local snapshot_ws = type(result) == "table" and type(result.workspace_id) == "string"
      and result.workspace_id
    or nil
  if float and api.nvim_win_is_valid(float.win) and api.nvim_buf_is_valid(float.buf) then
    local cursor = api.nvim_win_get_cursor(float.win)
    ui.set_lines(float.buf, float_ns, lines, hl)
    local config = geometry(lines)
    config.title = title_for(source.agent)
    config.title_pos = "center"
    api.nvim_win_set_config(float.win, config)
    api.nvim_win_set_cursor(float.win, { math.min(cursor[1], #lines), 0 })
    if source.focus then
      api.nvim_set_current_win(float.win)
    end
  else
    local win, buf = create_float(lines, source.agent)
    ui.set_lines(buf, float_ns, lines, hl)
    float = { win = win, buf = buf, rows = {}, lines = {} } --[[@as rutter.Float]]
  end
  local st = assert(float)
  -- An error answer carries no workspace id: keep the one known for the same file.
  if snapshot_ws == nil and st.uri == source.uri then
    snapshot_ws = st.workspace_id
  end
  st.workspace_id = snapshot_ws
  st.source_buf = source.bufnr
  st.source_win = source.win
  st.uri = source.uri
  st.client_id = source.client_id
  st.root = source.root
  st.target = source.target
  st.agent = source.agent
  st.lines = lines
  st.rows = rows
  st.result = result
  api.nvim_exec_autocmds("User", {
    pattern = "RutterInstructionsUpdated",
    modeline = false,
    data = { uri = source.uri, result = result },
  })
end

-- -- requests -----------------------------------------------------------------------------------

--- Ask the server for `uri`'s snapshot; `callback(result)` gets the snapshot or `{ error }`:
--- the typed error (`code`, `message`, `path`?, `details`?) that the server puts in the JSON-RPC
--- error's `data` when discovery fails closed or the file is in no served folder, else
--- `request_failed` (the server could not answer at all). With `profile` (an agent, or "all")
--- the answer is that agent's view (docs/reference/profiles.md) instead of the snapshot.
--- @param client vim.lsp.Client
--- @param uri string
--- @param bufnr integer
--- @param callback fun(result: table)
--- @param profile? string
function M.request(client, uri, bufnr, callback, profile)
  local params = { textDocument = { uri = uri }, profile = profile }
  local ok = client:request(M.METHOD, params, function(err, result)
    if err and type(err.data) == "table" and type(err.data.code) == "string" then
      result = { error = err.data }
    elseif err then
      result = {
        error = {
          code = "request_failed",
          message = string.format("%s failed: %s", M.METHOD, err.message or vim.inspect(err)),
        },
      }
    elseif type(result) ~= "table" then
      result = { error = { code = "no_answer", message = "the server answered nothing" } }
    end
    callback(result)
  end, bufnr)
  if not ok then
    callback({ error = { code = "not_running", message = "the rutter language server has stopped" } })
  end
end

--- Where the float's content comes from.
local function source_of(bufnr, win, client)
  local path = buf_path(bufnr)
  local root = folder_of(client, path)
  return {
    bufnr = bufnr,
    win = win,
    uri = vim.uri_from_bufnr(bufnr),
    client_id = client.id,
    root = root,
    target = relative(root, path) or api.nvim_buf_get_name(bufnr),
  }
end

local function fetch_and_render(source, client)
  -- The agent chosen now (`:RutterAgent`): a reload after a switch shows the new choice.
  source.agent = require("rutter.agents").profile()
  seq = seq + 1
  local mine = seq
  -- The buffer only scopes the request (pending-request tracking); it may be gone by now.
  local bufnr = api.nvim_buf_is_valid(source.bufnr) and source.bufnr or api.nvim_get_current_buf()
  M.request(client, source.uri, bufnr, function(result)
    vim.schedule(function()
      if mine ~= seq then
        return -- a newer request was sent meanwhile
      end
      render(source, result)
    end)
  end, source.agent)
end

local waiting = {} --- @type table<integer, boolean>

--- Run `fn(client)` with the buffer's rutter client, waiting (bounded) for one to attach.
local function with_client(bufnr, fn)
  local client = M.client_for(bufnr)
  if client then
    return fn(client)
  end
  local path = buf_path(bufnr)
  local enabled = vim.lsp.is_enabled == nil or vim.lsp.is_enabled(NAME)
  if not (enabled and path and require("rutter.root").find(path)) then
    notify(
      "no rutter language server for this buffer: enable it with vim.lsp.enable('rutter') "
        .. "(or require('rutter').setup()), open a file inside a project "
        .. "(a .git, AGENTS.md, CLAUDE.md or .prayu above it), see :checkhealth vim.lsp",
      vim.log.levels.WARN
    )
    return
  end
  if waiting[bufnr] then
    return
  end
  waiting[bufnr] = true
  notify("waiting for the rutter language server to start…")
  local id
  local timer = vim.defer_fn(function()
    if waiting[bufnr] then
      waiting[bufnr] = nil
      pcall(api.nvim_del_autocmd, id)
      notify("the rutter language server did not attach; see :checkhealth vim.lsp", vim.log.levels.WARN)
    end
  end, 15000)
  id = api.nvim_create_autocmd("LspAttach", {
    buffer = bufnr,
    callback = function(args)
      local attached = vim.lsp.get_client_by_id(args.data.client_id)
      if not attached or attached.name ~= NAME then
        return
      end
      waiting[bufnr] = nil
      if timer and not timer:is_closing() then
        timer:stop()
        timer:close()
      end
      fn(attached)
      return true -- delete this autocmd
    end,
  })
end

--- Request the stack for `bufnr` (nil or 0: the current buffer) and render it; `focus` moves
--- the cursor into the float.
--- @param bufnr? integer
--- @param focus boolean
local function request_for(bufnr, focus)
  local current = api.nvim_get_current_buf()
  bufnr = (bufnr == nil or bufnr == 0) and current or bufnr
  local win = api.nvim_get_current_win()
  with_client(bufnr, function(client)
    local source = source_of(bufnr, win, client)
    source.focus = focus or nil
    fetch_and_render(source, client)
  end)
end

--- `:RutterInstructions`: open the float for a buffer (default: the current one).
--- @param bufnr? integer
function M.show(bufnr)
  if bufnr == nil and float and float.buf == api.nvim_get_current_buf() then
    return M.refresh()
  end
  request_for(bufnr, true)
end

--- `:RutterInstructionsRefresh`: re-request for the current buffer (the float's own buffer
--- when the cursor is in the float) and update the open float, or open one.
--- @param bufnr? integer
function M.refresh(bufnr)
  if bufnr == nil and float and float.buf == api.nvim_get_current_buf() then
    return M.reload()
  end
  request_for(bufnr, false)
end

--- Re-request what the open float shows (after a change on disk).
function M.reload()
  local st = float
  if not st or not api.nvim_win_is_valid(st.win) then
    return
  end
  local client = vim.lsp.get_client_by_id(st.client_id)
  if not client then
    return render({
      bufnr = st.source_buf,
      win = st.source_win,
      uri = st.uri,
      client_id = st.client_id,
      root = st.root,
      target = st.target,
      agent = st.agent,
    }, { error = { code = "not_running", message = "the rutter language server has stopped" } })
  end
  fetch_and_render({
    bufnr = st.source_buf,
    win = st.source_win,
    uri = st.uri,
    client_id = st.client_id,
    root = st.root,
    target = st.target,
  }, client)
end

--- What the open float shows (for statuslines, tests and scripts), or nil.
--- @return { win: integer, buf: integer, uri: string, target: string, agent: string?, title: string, lines: string[], rows: table<integer, string>, result: table? }?
function M.float()
  if not float or not api.nvim_win_is_valid(float.win) then
    return nil
  end
  return vim.deepcopy({
    win = float.win,
    buf = float.buf,
    uri = float.uri,
    target = float.target,
    agent = float.agent,
    title = title_for(float.agent),
    lines = float.lines,
    rows = float.rows,
    result = float.result,
  })
end

-- -- server notifications, code lens --------------------------------------------------------------

local function refresh_lenses(client)
  if not M.options.codelens then
    return
  end
  for bufnr in pairs(client.attached_buffers or {}) do
    if api.nvim_buf_is_loaded(bufnr) and M.is_instruction_file(api.nvim_buf_get_name(bufnr)) then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
  end
end

--- Handler of `rutter/instructionsChanged` `{ workspace_id, paths }` (see lsp/rutter.lua):
--- refreshes the code lenses and, when its workspace is affected, the open float; then fires
--- `User RutterInstructionsChanged` with the params and the client id as data.
function M.on_instructions_changed(_, params, ctx)
  params = type(params) == "table" and params or {}
  local client_id = ctx and ctx.client_id
  vim.schedule(function()
    local client = client_id and vim.lsp.get_client_by_id(client_id)
    if client then
      refresh_lenses(client)
    end
    local st = float
    if st and api.nvim_win_is_valid(st.win) then
      local same = st.workspace_id ~= nil and st.workspace_id == params.workspace_id
      local unknown = st.workspace_id == nil and st.client_id == client_id
      if same or unknown then
        M.reload()
      end
    end
    api.nvim_exec_autocmds("User", {
      pattern = "RutterInstructionsChanged",
      modeline = false,
      data = { client_id = client_id, workspace_id = params.workspace_id, paths = params.paths },
    })
  end)
end

--- `K` with a bordered hover in `bufnr`, unless hover_border is false, 'winborder' already
--- gives every float a border, or `K` is mapped to something other than Neovim's default LSP
--- hover (a mapping of your own stays).
local function bordered_hover(bufnr)
  local border = M.options.hover_border
  if border == false or border == nil or vim.o.winborder ~= "" then
    return
  end
  local mapped = api.nvim_buf_call(bufnr, function()
    return vim.fn.maparg("K", "n", false, true)
  end)
  local ours = type(mapped) == "table" and mapped.desc == "rutter: hover"
  local default = type(mapped) ~= "table" or next(mapped) == nil or mapped.desc == "vim.lsp.buf.hover()"
  if ours or not default then
    return
  end
  vim.keymap.set("n", "K", function()
    vim.lsp.buf.hover({ border = M.options.hover_border })
  end, { buffer = bufnr, desc = "rutter: hover" })
end

--- LspAttach for rutter clients: a bordered hover; watch what discovery of the buffer's file
--- reads; code lens on instruction files.
function M.on_attach(client, bufnr)
  bordered_hover(bufnr)
  if M.options.watch_files then
    require("rutter.watch").attach(client, bufnr, folder_of(client, buf_path(bufnr)))
  end
  if not M.options.codelens or not M.is_instruction_file(api.nvim_buf_get_name(bufnr)) then
    return
  end
  local lens_group = api.nvim_create_augroup("rutter.codelens", { clear = false })
  api.nvim_clear_autocmds({ group = lens_group, buffer = bufnr })
  api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost" }, {
    group = lens_group,
    buffer = bufnr,
    callback = function()
      if vim.lsp.get_client_by_id(client.id) then
        vim.lsp.codelens.refresh({ bufnr = bufnr })
      end
    end,
  })
  vim.lsp.codelens.refresh({ bufnr = bufnr })
end

-- -- setup --------------------------------------------------------------------------------------

--- Define the user commands and the LspAttach hook (idempotent; plugin/rutter.lua calls it).
function M.init()
  if group then
    return
  end
  group = api.nvim_create_augroup("rutter", { clear = true })
  api.nvim_create_user_command("RutterInstructions", function()
    M.show()
  end, { desc = "rutter: the instruction stack of the current buffer, and why" })
  api.nvim_create_user_command("RutterInstructionsRefresh", function()
    M.refresh()
  end, { desc = "rutter: re-request the instruction stack and refresh the float" })
  api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == NAME then
        M.on_attach(client, args.buf)
      end
    end,
  })
  api.nvim_create_autocmd("LspDetach", {
    group = group,
    callback = function(args)
      local client_id = args.data.client_id
      vim.schedule(function()
        local client = vim.lsp.get_client_by_id(client_id)
        if not client or client:is_stopped() then
          require("rutter.watch").stop(client_id)
        end
      end)
    end,
  })
end

--- @param opts? rutter.Options
function M.setup(opts)
  opts = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  M.options = opts
  M.init()
  local override = {}
  if opts.cmd then
    override.cmd = opts.cmd
  end
  if opts.settings then
    override.settings = { rutter = opts.settings }
    override.init_options = { rutter = opts.settings }
  end
  if next(override) then
    vim.lsp.config(NAME, override)
  end
  local keys = opts.keymaps or {}
  if keys.instructions then
    vim.keymap.set("n", keys.instructions, M.show, { desc = "rutter: instruction stack" })
  end
  if keys.refresh then
    vim.keymap.set("n", keys.refresh, function()
      M.refresh()
    end, { desc = "rutter: refresh instruction stack" })
  end
  if opts.enable then
    vim.lsp.enable(NAME)
  end
end

return M
