// The slow-client measurement shared by the endpoint probes: `slow` clients each send a
// request head a byte a second (a slowloris), then one scrape on a fresh connection is
// timed. Prints one line.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace libcheck {

inline int Dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  return fd;
}

// One GET on a fresh connection; the seconds it took, or -1 after `limit` s without an answer.
inline double Scrape(int port, int limit) {
  int fd = Dial(port);
  timeval tv{limit, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const auto start = std::chrono::steady_clock::now();
  const char* req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  (void)!write(fd, req, strlen(req));
  char buf[256];
  const ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline void SlowClientsThenScrape(int port, int slow) {
  // A server that closes a slow client's connection must not end the probe (EPIPE instead).
  signal(SIGPIPE, SIG_IGN);
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int i = 0; i < slow; ++i) {
    clients.emplace_back([&] {
      int fd = Dial(port);
      const char* req = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
      (void)!write(fd, req, strlen(req));
      while (!stop) {
        (void)!write(fd, "a", 1);
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const double took = Scrape(port, 10);
  if (took < 0) {
    std::printf("%d slow clients: scrape FAILED (no answer in 10 s)\n", slow);
  } else {
    std::printf("%d slow clients: scrape answered in %.2f s\n", slow, took);
  }
  stop = true;
  for (auto& c : clients) c.join();
}

}  // namespace libcheck
