"""An HTTP server that answers, but not as S3 (issue 24, defect 4).

not_s3.py MODE PORTFILE: serves on 127.0.0.1 on a free port, written to
PORTFILE once listening; MODE html200 answers every request 200 with an
HTML page (a web server's welcome page), text404 answers 404 with a plain
text body (a proxy or a web server without the path). Runs until killed.
"""
import http.server
import sys

MODE, PORTFILE = sys.argv[1], sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        if MODE == "html200":
            body = b"<html><body><h1>Welcome to nginx!</h1></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
        else:
            body = b"Not Found\n"
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
