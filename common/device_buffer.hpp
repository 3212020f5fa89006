// RAII device memory. A buffer owns one cudaMalloc allocation; moving transfers it, copying
// is not allowed (two owners would free it twice). An allocation that cannot fit says how
// much was asked for and how much the device has free, instead of a bare error code.
#pragma once

#include "check.hpp"

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace cdl {

// Throws cdl::error with the request and the device's free/total memory.
void* device_allocate(std::size_t bytes);

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count)
      : data_(static_cast<T*>(device_allocate(count * sizeof(T)))), size_(count) {}
  ~device_buffer() { cudaFree(data_); }  // never throws: a destructor may run during unwinding

  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  void copy_from(std::span<const T> host) {
    if (host.size() != size_) throw error("device_buffer::copy_from: size mismatch");
    CDL_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  void copy_to(std::span<T> host) const {
    if (host.size() != size_) throw error("device_buffer::copy_to: size mismatch");
    CDL_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
  }
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    copy_to(host);
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cdl
