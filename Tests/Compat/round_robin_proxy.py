"""A TCP proxy that hands each new connection to the next of several rtdb-server nodes.

Tools/compat-test --nodes 2 puts it in front of two nodes sharing PostgreSQL, so the Admin SDK's
connections (its request session, each listen's event stream) land on different nodes.

    python round_robin_proxy.py PORT_FILE NODE_PORT [NODE_PORT ...]

It listens on a free loopback port, writes that port to PORT_FILE, and runs until killed.
"""
import asyncio
import itertools
import os
import sys


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:  # pylint: disable=broad-except
            pass


async def main():
    port_file, node_ports = sys.argv[1], [int(p) for p in sys.argv[2:]]
    targets = itertools.cycle(node_ports)

    async def handle(client_reader, client_writer):
        port = next(targets)
        try:
            node_reader, node_writer = await asyncio.open_connection('127.0.0.1', port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, node_writer), pipe(node_reader, client_writer))

    server = await asyncio.start_server(handle, '127.0.0.1', 0)
    # Written whole under another name and renamed, so a reader never sees half a port.
    with open(port_file + '.tmp', 'w', encoding='utf-8') as file:
        file.write(str(server.sockets[0].getsockname()[1]))
    os.replace(port_file + '.tmp', port_file)
    async with server:
        await server.serve_forever()


if __name__ == '__main__':
    asyncio.run(main())
