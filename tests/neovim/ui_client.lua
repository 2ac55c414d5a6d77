-- A minimal remote UI for the tests: `nvim --clean --headless -l ui_client.lua ADDRESS [W H]`
-- attaches to the Neovim listening at ADDRESS (nvim_ui_attach, linegrid) and discards what it
-- is sent until that Neovim goes away. With a UI attached, Neovim behaves as it does for a
-- person (hit-enter prompts included), which headless Neovim alone never shows.
local address = assert(arg[1], "usage: ui_client.lua ADDRESS [WIDTH HEIGHT]")
local width, height = tonumber(arg[2] or "80"), tonumber(arg[3] or "24")
local pipe = assert(vim.uv.new_pipe(false))
local closed = false
pipe:connect(address, function(err)
  assert(not err, err)
  pipe:write(vim.mpack.encode({ 0, 1, "nvim_ui_attach", { width, height, { ext_linegrid = true } } }))
  pipe:read_start(function(read_err, data)
    if read_err or data == nil then
      closed = true
    end
  end)
end)
vim.wait(10 * 60 * 1000, function()
  return closed
end, 50)
